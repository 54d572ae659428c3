from django.urls import path

from accounts import views

urlpatterns = [
    path("sign-out-everywhere/", views.sign_out_everywhere_view, name="sign-out-everywhere"),
]
